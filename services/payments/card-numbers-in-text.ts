import { DomainError } from '../../domain/errors.ts';
import { fieldHoldingCardNumber } from '../../domain/payments/card-echo.ts';

/**
 * Refuses, before anything is written, a card number typed into a field that is not the card (a cardholder's name or
 * address): a 400 naming the field, so the number is never kept in plain text. The message names the field only.
 */
export function refuseCardNumbersInText(fields: Parameters<typeof fieldHoldingCardNumber>[0]): void {
  const field = fieldHoldingCardNumber(fields);
  if (field !== undefined) throw new DomainError('validation', `${field} must not hold a card number`, { field });
}
