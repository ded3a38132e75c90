import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { passesLuhn } from '../../domain/payments/card.ts';
import { holdsCardNumber, isCardNumberAlone, maskCardEcho } from '../../domain/payments/card-echo.ts';
import { REFUND_ID_PATTERN } from '../../domain/payments-api/ids.ts';
import { newRefundId } from '../../domain/payments-api/new-refund-id.ts';

describe('maskCardEcho', () => {
  it('masks a card number however it is written, keeping its first 6 and last 4 digits, and a named security code', () => {
    expect(maskCardEcho('card.number 4111111111111111 (cvv 739) failed')).toBe('card.number 411111******1111 (cvv ***) failed');
    expect(maskCardEcho('{"number":"4242 4242 4242 4242","cvv":"123"}')).toBe('{"number":"424242******4242","cvv":"***"}');
    expect(maskCardEcho('pan=4242-4242-4242-4242&cvc2=1234')).toBe('pan=424242******4242&cvc2=***');
    expect(maskCardEcho('card 4996.3148.6779.4771 on file')).toBe('card 499631******4771 on file');
    expect(maskCardEcho('Security code: 739')).toBe('Security code: ***');
  });

  it('finds a card number followed by its CVV or expiry in the same run of digits', () => {
    expect(maskCardEcho('card 4111111111111111 123 declined')).toBe('card 411111******1111 123 declined');
    expect(maskCardEcho('amex 378282246310005 1234')).toBe('amex 378282*****0005 1234');
    expect(maskCardEcho('4111111111111111 12 30')).toBe('411111******1111 12 30');
    expect(maskCardEcho('4111 1111 1111 1111 123')).toBe('411111******1111 123');
    expect(maskCardEcho('{"cvvNumber":"739"} CVC2 is 739')).toBe('{"cvvNumber":"***"} CVC2 is ***');
  });

  it('leaves ids, amounts and timestamps that are no card number as they are', () => {
    expect(maskCardEcho('{"id":"sbx_0d9f","amount":"29.99","code":2636,"at":1795712869321}')).toBe('{"id":"sbx_0d9f","amount":"29.99","code":2636,"at":1795712869321}');
    expect(maskCardEcho('decided 123 times')).toBe('decided 123 times');
    // After a JSON escape or a URL-encoded separator (which end in a letter), a card number is still masked.
    expect(maskCardEcho('{"message":"Invalid card\\n4111111111111111"}')).toBe('{"message":"Invalid card\\n411111******1111"}');
    expect(maskCardEcho('card_number%3D4111111111111111')).toBe('card_number%3D411111******1111');
  });

  it('keeps an id whose digits sit between letters whole, however Luhn-valid its digits', () => {
    // A refund reference the sandbox answered; its 14 digits 77151283634847 pass Luhn.
    const answer = '{"id":"sbr_1","reference":"re_77151283634847ae08f1c2d3b4a59687","status":"refunded"}';
    expect(maskCardEcho(answer)).toBe(answer);
    expect(maskCardEcho('ref 77151283634847, ref77151283634847')).toBe('ref 771512****4847, ref771512****4847');
    // Followed by a letter but not inside an id: a track-2 echo, a number typed into an e-mail.
    expect(maskCardEcho('track2=4111111111111111D25121010000')).toBe('track2=411111******1111D25121010000');
    expect(maskCardEcho('"4111111111111111gmail.com"')).toBe('"411111******1111gmail.com"');
  });

  it('never leaves a Luhn-valid 13-19 digit number whole, wherever it sits in the text', () => {
    const luhnNumber = fc.stringMatching(/^[1-9]\d{12,18}$/).filter(passesLuhn);
    fc.assert(
      fc.property(fc.string(), luhnNumber, fc.string(), fc.stringMatching(/^(| \d{3,4}| \d{2} \d{2}|-\d{3})$/), (before, pan, after, trailing) => {
        const text = `${before.replace(/\d/g, 'x')} ${pan}${trailing} ${after.replace(/\d/g, 'x')}`;
        expect(maskCardEcho(text)).not.toContain(pan);
      }),
    );
  });
});

describe('holdsCardNumber', () => {
  it('finds a card number inside letters too: refused text is never kept, so it looks harder than the mask', () => {
    expect(holdsCardNumber('Jane4111111111111111x')).toBe(true);
    expect(maskCardEcho('Jane4111111111111111x')).toBe('Jane4111111111111111x');
    expect(holdsCardNumber('Jane Doe, flat 12')).toBe(false);
    // Groups split as people type them; numbers that are no card stay allowed however they are split.
    for (const typed of ['4000\t0566\t5566\t5556', '4000  0566\u00a05566\u200b5556', '４０００ ０５６６ ５５６６ ５５５６']) expect(holdsCardNumber(typed), typed).toBe(true);
    // Slashes, commas and brackets end a run: two phone numbers in one field are no card, however their digits add up.
    for (const typed of ['Flat 12, 34 Main St', '+44 (20) 7946 0958', '12/05/1990', '020 7946 7946 / 07700 669154', '(701) 433-2895, (014) 555-3328', '4000/0566/5566/5556']) {
      expect(holdsCardNumber(typed), typed).toBe(false);
    }
  });

  it('isCardNumberAlone: a card number typed in place of the value, not digits inside it (an e-mail tag)', () => {
    expect(isCardNumberAlone(' 4000 0566\t5566 5556 ')).toBe(true);
    expect(isCardNumberAlone('4000-0566-5566-5556')).toBe(true);
    expect(isCardNumberAlone('qa+4000056655665556@shop.example')).toBe(false);
    expect(isCardNumberAlone('1234 5678')).toBe(false);
  });
});

describe('newRefundId', () => {
  it('mints ids the card-number mask keeps whole (one random id in about five thousand it would mask)', () => {
    for (let i = 0; i < 50_000; i++) {
      const id = newRefundId();
      expect(id).toMatch(REFUND_ID_PATTERN);
      expect(maskCardEcho(`"${id}"`)).toBe(`"${id}"`);
    }
  });
});
