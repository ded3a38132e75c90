import { randomBytes } from 'node:crypto';
import { maskCardNumbers } from '../payments/card-echo.ts';

/**
 * A new refund id, `re_<32 hex>` (apart from `ids.ts`, which workflows import: this needs `node:crypto`). One whose
 * hex digits the card-number mask would take for a card (a Luhn-valid run of 13 or more digits, about one id in five
 * thousand) is drawn again: the id is quoted in the processor's stored answer and in error texts, which are masked,
 * and must read there as it reads everywhere else.
 */
export function newRefundId(): string {
  for (;;) {
    const id = `re_${randomBytes(16).toString('hex')}`;
    if (maskCardNumbers(id) === id) return id;
  }
}
