import { describe, expect, it } from 'vitest';
import { PLAIN_TEXT_LIMITS, UnconvertibleHtmlError, plainTextOf, plainTextProblem } from '../../domain/email/plain-text.ts';

const nested = (open: string, close: string, depth: number, inner = 'x') => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

describe('the plain-text part of an e-mail', () => {
  it('is made from HTML within the limits: quotes and list items up to 8 deep, lists numbered as written', () => {
    expect(plainTextOf('<p>Hello <a href="https://shop.example/o/1">your order</a></p><ol start="3"><li>one</li><li>two</li></ol>')).toBe(
      'Hello your order https://shop.example/o/1\n\n 3. one\n 4. two',
    );
    expect(plainTextProblem(nested('<blockquote>', '</blockquote>', PLAIN_TEXT_LIMITS.maxPrefixedDepth))).toBeUndefined();
    expect(plainTextProblem(nested('<ul><li>', '</li></ul>', PLAIN_TEXT_LIMITS.maxPrefixedDepth))).toBeUndefined();
    // Tables and sections nest deeply in real e-mails and cost the converter nothing per line: no limit of their own.
    expect(plainTextProblem(nested('<table><tr><td><div>', '</div></td></tr></table>', 200))).toBeUndefined();
    expect(plainTextProblem('<ol start="-1000000000"><li>a</li></ol><ol start="x"><li>b</li></ol>')).toBeUndefined();
  });

  it('is refused, before converting anything, for what the converter would never finish or only after seconds', () => {
    for (const start of ['9007199254740992', '&#57;007199254740992', '1000000001', '-9007199254740993', '99999999999999999999999']) {
      expect(plainTextProblem(`<ol start="${start}"><li>a</li><li>b</li></ol>`), start).toMatch(/^a list starts at/);
    }
    expect(plainTextProblem(nested('<blockquote>', '</blockquote>', PLAIN_TEXT_LIMITS.maxPrefixedDepth + 1))).toBe('quotes and list items nest more than 8 deep');
    expect(plainTextProblem(nested('<ol><li>', '</li></ol>', 5_000))).toBe('quotes and list items nest more than 8 deep');
    expect(() => plainTextOf('<OL START="9007199254740992"><LI>a</LI></OL>')).toThrow(UnconvertibleHtmlError);
    // Of several `start`s the converter takes the last: every one is checked.
    expect(plainTextProblem('<ol start="1" start="9007199254740992"><li>a</li><li>b</li></ol>')).toMatch(/^a list starts at 9007199254740992/);
    expect(plainTextProblem('<ol start="9007199254740992" START="1"><li>a</li><li>b</li></ol>')).toMatch(/^a list starts at 9007199254740992/);
  });
});
