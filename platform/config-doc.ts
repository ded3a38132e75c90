import { SETTINGS } from './config.ts';

/** The configuration reference as Markdown, generated from SETTINGS so it cannot drift. */
export function renderConfigurationDoc(): string {
  const rows = Object.values(SETTINGS).map(({ env, schema }) => {
    const fallback = schema.default !== undefined ? `\`${schema.default}\`` : '(unset)';
    return `| \`${env}\` | ${fallback} | ${schema.description} |`;
  });
  return [
    '# Configuration',
    '',
    'Generated from `platform/config.ts` by `npm run docs:config`; a test fails when it drifts.',
    '',
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
