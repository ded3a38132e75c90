/**
 * The cardholder's 3-D Secure challenge page. No bank is involved: the page lets whoever drives the
 * browser (a person or a test) pick what the cardholder does.
 */
import type { Authorization, Challenge } from './ledger.ts';

export function unknownChallengePage(): string {
  return page('Unknown challenge', '<p>This 3-D Secure challenge does not exist.</p>');
}

export function finishedChallengePage(state: Challenge['state']): string {
  return page('Sandbox 3-D Secure challenge', `<p>This challenge is finished (${state}). You may close this window.</p>`);
}

export function challengeFormPage(authorization: Authorization): string {
  const action = `/challenge/${encodeURIComponent(authorization.id)}`;
  return page(
    'Sandbox 3-D Secure challenge',
    `<p>Merchant <strong>${escapeHtml(authorization.merchantId)}</strong> asks you to confirm a payment of
  <strong>${escapeHtml(authorization.amount)} ${escapeHtml(authorization.currency)}</strong>.</p>
<p>This is the sandbox processor: no bank is involved. Pick what the cardholder does.</p>
<form method="post" action="${action}"><input type="hidden" name="outcome" value="authenticate"><button type="submit">Authenticate</button></form>
<form method="post" action="${action}"><input type="hidden" name="outcome" value="fail"><button type="submit">Fail authentication</button></form>`,
  );
}

export function challengeResultPage(state: Challenge['state']): string {
  return page('Sandbox 3-D Secure challenge', `<p>Authentication ${state === 'authenticated' ? 'succeeded' : state === 'failed' ? 'failed' : 'is pending'}. You may close this window.</p>`);
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}form{display:inline-block;margin-right:1rem}button{font-size:1rem;padding:.5rem 1rem}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}
