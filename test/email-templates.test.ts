import { describe, expect, it } from 'vitest';
import { parseAddress } from '../domain/email/addresses.ts';
import { requestIdentity } from '../domain/email/idempotency.ts';
import { classifySmtpFailure } from '../domain/email/smtp-outcome.ts';
import { createStringTemplateCompiler, RenderedTooLargeError, STRING_TEMPLATE_LIMITS } from '../domain/email/string-templates.ts';
import { createEmailRenderer } from '../domain/email/render-email.ts';
import { decodeEmailCursor, encodeEmailCursor } from '../domain/email/email-query.ts';
import { decodeLeadCursor, encodeLeadCursor } from '../domain/leads/lead-query.ts';
import { decodeMitigationCursor, encodeMitigationCursor } from '../domain/mitigation/search.ts';

const problemOf = (content: string, compiler = createStringTemplateCompiler()) => {
  const compiled = compiler.compile(content);
  return typeof compiled === 'function' ? undefined : compiled.problem;
};

describe('string templates', () => {
  it('follow DESIGN: escaped values, raw triple braces, dotted paths, missing renders empty, #if falsy values', () => {
    const compiled = createStringTemplateCompiler().compile('{{a}}|{{{a}}}|{{o.p.q}}|{{missing.deep}}|{{#if v}}T{{else}}F{{/if}}');
    if (typeof compiled !== 'function') throw new Error(compiled.problem);
    expect(compiled({ a: '<b>"x"&</b>', o: { p: { q: 7 } }, v: 1 })).toBe('&lt;b&gt;&quot;x&quot;&amp;&lt;/b&gt;|<b>"x"&</b>|7||T');
    for (const falsy of [undefined, null, false, '', 0, []]) expect(compiled({ v: falsy })).toMatch(/\|F$/);
  });

  it('do not reach prototypes through data', () => {
    const compiled = createStringTemplateCompiler().compile('[{{constructor}}][{{a.__proto__}}][{{a.constructor.name}}]');
    if (typeof compiled !== 'function') throw new Error(compiled.problem);
    expect(compiled({ a: {} })).toBe('[][][]');
  });

  it.each([
    ['{{> header}}', 'uses a partial'],
    ['{{#> layout}}x{{/layout}}', 'uses a partial'],
    ['{{#each items}}{{this}}{{/each}}', 'only {{#if}}'],
    ['{{#with a}}{{b}}{{/with}}', 'only {{#if}}'],
    ['{{lookup a "b"}}', 'calls a helper'],
    ['{{log "x"}}', 'calls a helper'],
    ['{{a b}}', 'calls a helper'],
    ['{{#if a}}unclosed', 'is not a valid template'],
    // `{{#if}}` keeps the context: a parent path reads above the data and could only render nothing.
    ['<p>{{../name}}</p>', 'reads a parent context'],
    ['{{#if a}}{{../../b}}{{/if}}', 'reads a parent context'],
  ])('refuse %s', (content, problem) => {
    expect(problemOf(content)).toContain(problem);
  });

  it('are bounded in size, parts and nesting, and in compile time', () => {
    expect(problemOf('x'.repeat(STRING_TEMPLATE_LIMITS.maxLength + 1))).toContain('longer than');
    expect(problemOf('{{a}}'.repeat(STRING_TEMPLATE_LIMITS.maxNodes))).toContain('too complex');
    expect(problemOf(`${'{{#if a}}'.repeat(25)}x${'{{/if}}'.repeat(25)}`)).toContain('nests blocks deeper');
    let clock = 0;
    const slow = createStringTemplateCompiler({ now: () => (clock += 2_000) });
    expect(problemOf('<p>{{a}}</p>', slow)).toContain('longer than 1000 ms');
    expect(slow.cacheSize).toBe(0);
  });

  it('are compiled once per content and cached by its hash, least recently used out', () => {
    const compiler = createStringTemplateCompiler({ cacheEntries: 2 });
    const first = compiler.compile('<p>{{a}}</p>');
    expect(compiler.compile('<p>{{a}}</p>')).toBe(first);
    compiler.compile('<p>{{b}}</p>');
    compiler.compile('<p>{{a}}</p>');
    compiler.compile('<p>{{c}}</p>');
    expect(compiler.cacheSize).toBe(2);
    expect(compiler.compile('<p>{{a}}</p>')).toBe(first);
    expect(problemOf('{{> x}}', compiler)).toBeDefined();
    expect(compiler.cacheSize).toBe(2);
  });
});

describe('addresses', () => {
  it('accept bare addresses and display names, and give the lower-case domain', () => {
    expect(parseAddress('Orders@Shop.Example')).toEqual({ name: '', formatted: 'Orders@Shop.Example', address: 'Orders@Shop.Example', domain: 'shop.example' });
    expect(parseAddress('Shop <a@shop.example>')).toEqual({ name: 'Shop', formatted: 'Shop <a@shop.example>', address: 'a@shop.example', domain: 'shop.example' });
    expect(parseAddress('  <a@shop.example> ')).toMatchObject({ name: '', formatted: 'a@shop.example' });
    expect(parseAddress('"Shop, Inc." <a@shop.example>')).toEqual({ name: 'Shop, Inc.', formatted: '"Shop, Inc." <a@shop.example>', address: 'a@shop.example', domain: 'shop.example' });
    expect(parseAddress('"a \\"b\\" c" <a@shop.example>')).toMatchObject({ name: 'a "b" c', formatted: '"a \\"b\\" c" <a@shop.example>' });
    expect(parseAddress('Café Ünïcode <a@shop.example>')).toMatchObject({ name: 'Café Ünïcode' });
  });

  it.each([
    'a@',
    '@shop.example',
    'a b@shop.example',
    'a@shop',
    'a@-shop.example',
    'Shop <a@shop.example',
    'a@shop.example\r\nBcc: x@y.example',
    `${'a'.repeat(65)}@shop.example`,
    // More than one address, however disguised: each would pass one domain to the check and send to another.
    'evil@attacker.example, <a@shop.example>',
    'a@shop.example, b@shop.example',
    'a@shop.example; b@shop.example',
    'Team: evil@attacker.example, a@shop.example;',
    'Shop; evil@attacker.example <a@shop.example>',
    'Shop, Inc <a@shop.example>',
    'a@shop.example evil@attacker.example',
    'evil@attacker.example <a@shop.example>',
    'Shop <a@shop.example> <b@x.example>',
    '"Shop" x <a@shop.example>',
    '"unterminated <a@shop.example>',
  ])(
    'refuse %j',
    (written) => {
      expect(typeof parseAddress(written)).toBe('string');
    },
  );
});

describe('SMTP failures', () => {
  it('4xx and no answer are temporary; a 5xx reply to MAIL FROM, RCPT TO or DATA is permanent', () => {
    expect(classifySmtpFailure({ responseCode: 451, response: '451 4.3.0 Local error', command: 'DATA' })).toEqual({ kind: 'temporary', reason: '451 4.3.0 Local error', responseCode: 451, command: 'DATA' });
    expect(classifySmtpFailure({ responseCode: 550, response: '550 5.1.1 No such user', command: 'DATA' }).kind).toBe('permanent');
    expect(classifySmtpFailure({ responseCode: 550, response: '550 5.1.1 No such user', command: 'RCPT TO' }).kind).toBe('permanent');
    expect(classifySmtpFailure({ responseCode: 553, response: '553 sender refused', command: 'MAIL FROM' }).kind).toBe('permanent');
    expect(classifySmtpFailure({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:25' }).kind).toBe('temporary');
    expect(classifySmtpFailure({ code: 'ETIMEDOUT', message: 'Greeting never received' }).kind).toBe('temporary');
  });

  it('a refused login or a 5xx about the connection is temporary: the e-mail is retried on the schedule', () => {
    expect(classifySmtpFailure({ code: 'EAUTH', responseCode: 535, response: '535 5.7.8 Authentication credentials invalid', command: 'AUTH PLAIN' })).toMatchObject({ kind: 'temporary', responseCode: 535, command: 'AUTH PLAIN' });
    expect(classifySmtpFailure({ code: 'EPROTOCOL', responseCode: 554, response: '554 No SMTP service here', command: 'CONN' }).kind).toBe('temporary');
    expect(classifySmtpFailure({ code: 'EPROTOCOL', responseCode: 500, response: '500 unrecognised command' }).kind).toBe('temporary');
  });
});

describe('rendered size', () => {
  it('a string template is never rendered past the cap: the bound is computed from the tree and the data first', () => {
    const compiled = createStringTemplateCompiler().compile('{{a}}'.repeat(2400));
    if (typeof compiled !== 'function') throw new Error(compiled.problem);
    const data = { a: 'x'.repeat(30_000) };
    expect(compiled.renderedLengthBound(data)).toBe(72_000_000);
    expect(() => compiled(data)).toThrow(RenderedTooLargeError);
    expect(compiled({ a: 'x'.repeat(400) })).toHaveLength(960_000);
  });

  it('bounds escaping, raw values, nested paths, both #if branches and lists from above', () => {
    const compiled = createStringTemplateCompiler().compile('<p>{{a}}|{{{a}}}|{{o.p}}|{{missing}}|{{list}}</p>{{#if v}}{{a}}{{else}}{{o.p}}{{o.p}}{{/if}}{{s.length}}{{@root.a}}');
    if (typeof compiled !== 'function') throw new Error(compiled.problem);
    for (const data of [
      { a: `<&"'\`=>`, o: { p: 'xyz' }, list: ['a<', 'b'], v: true, s: 'four' },
      { a: '', o: { p: '&&&&' }, list: [], v: false, s: '' },
      { a: 7, o: { p: null }, list: [[1, 2], [3]], v: 0 },
    ]) {
      const html = compiled(data);
      expect(compiled.renderedLengthBound(data)).toBeGreaterThanOrEqual(html.length);
    }
  });

  it('the renderer refuses a built-in template rendering over the cap', async () => {
    const renderEmail = createEmailRenderer({ compiler: createStringTemplateCompiler() });
    await expect(renderEmail({ type: 'string', content: '{{a}}'.repeat(100) }, { a: 'x'.repeat(20_000) })).rejects.toThrow(RenderedTooLargeError);
    await expect(renderEmail({ type: 'react', name: 'generic' }, { heading: 'H', bodyContent: 'x'.repeat(STRING_TEMPLATE_LIMITS.maxRenderedLength + 1) })).rejects.toThrow(RenderedTooLargeError);
  });
});

describe('request identity', () => {
  it('is the same for the same content in any field order, and keeps given and derived keys apart', () => {
    const a = requestIdentity('single', { tenant_key: 't', to: 'x', data: { a: 1, b: 2 } });
    const b = requestIdentity('single', { data: { b: 2, a: 1 }, to: 'x', tenant_key: 't' });
    expect(b).toEqual(a);
    expect(a.key).toBe(`content:${a.requestHash}`);
    const keyed = requestIdentity('single', { tenant_key: 't', to: 'x', data: { a: 1, b: 2 }, idempotencyKey: a.requestHash });
    expect(keyed.key).toBe(`key:${a.requestHash}`);
    expect(keyed.requestHash).toBe(a.requestHash);
    expect(requestIdentity('batch', { tenant_key: 't', to: 'x', data: { a: 1, b: 2 } }).requestHash).not.toBe(a.requestHash);
    expect(requestIdentity('single', { tenant_key: 'T', to: 'x', data: { a: 1, b: 2 } })).toEqual(a);
  });
});

describe('e-mail cursors', () => {
  it('round-trip what PostgreSQL prints and refuse what its casts would refuse', () => {
    const id = '0b7c2f4e-3a9d-4c1e-9f7a-2d5e6b8c1a00';
    for (const createdAt of ['2026-11-23 10:15:00.123456+00', '2026-11-23 10:15:00+05:30', '2024-02-29T23:59:59Z', '2026-11-23 10:15:00-15:59', '2026-11-23 10:15:00+1400']) {
      expect(decodeEmailCursor(encodeEmailCursor({ createdAt, id }))).toEqual({ createdAt, id });
    }
    for (const [createdAt, badId] of [
      ['2026-02-30 10:00:00+00', id],
      ['2026-13-01 10:00:00+00', id],
      ['2026-11-23 24:00:00+00', id],
      // Offsets beyond PostgreSQL's ±15:59.
      ['2026-11-23 10:00:00+16', id],
      ['2026-11-23 10:00:00-99', id],
      ['2026-11-23 10:00:00+15:60', id],
      ['Mon Nov 23 2026', id],
      ['2026-11-23', id],
      ['2026-11-23 10:00:00+00', '-'.repeat(36)],
      ['2026-11-23 10:00:00+00', `urn:uuid:${id}`],
    ]) {
      expect(decodeEmailCursor(encodeEmailCursor({ createdAt: createdAt!, id: badId! }))).toBeUndefined();
    }
  });

  it('belong to their own list: a lead\'s or a transaction\'s cursor of the same shape is no e-mail cursor, nor the other way round', () => {
    const position = { createdAt: '2026-11-23 10:15:00.123456+00', id: '0b7c2f4e-3a9d-4c1e-9f7a-2d5e6b8c1a00' };
    const leadCursor = encodeLeadCursor({ updatedAt: position.createdAt, id: position.id });
    expect(decodeLeadCursor(leadCursor)).toEqual({ updatedAt: position.createdAt, id: position.id });
    expect(decodeEmailCursor(leadCursor)).toBeUndefined();
    expect(() => decodeLeadCursor(encodeEmailCursor(position))).toThrow('not a cursor');
    expect(() => decodeMitigationCursor(encodeEmailCursor({ createdAt: '1795000000000000', id: position.id }))).toThrow('not a cursor');
    expect(decodeEmailCursor(encodeMitigationCursor({ sentMicros: '1795000000000000', id: position.id }))).toBeUndefined();
  });
});

describe('e-mail error bodies (spec 7.2)', () => {
  it('an unexpected failure is 500 Server error with a sentence, never the internal message', async () => {
    const { toEmailError } = await import('../api/rest/email-errors.ts');
    const mapped = toEmailError(new Error('connect ECONNREFUSED 10.0.0.7:7233'), 262_144);
    expect(mapped.status).toBe(500);
    expect(mapped.body.error).toBe('Server error');
    expect(typeof mapped.body.details).toBe('string');
    expect(JSON.stringify(mapped.body)).not.toContain('ECONNREFUSED');
  });
});
