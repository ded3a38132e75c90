import { defineEntity, p } from '@mikro-orm/core';

/**
 * The key card security codes of one sealing period are sealed under (`CardVault`), wrapped under
 * DATA_ENCRYPTION_KEY. Deleted by the retention pass once `destroyAfter` has passed: the codes it sealed, kept in
 * payment histories, can then be opened by no one.
 */
const CardSecurityCodeKeySchema = defineEntity({
  name: 'CardSecurityCodeKey',
  tableName: 'card_security_code_keys',
  properties: {
    /** `cvv-`, the start of its sealing period and the id of the key wrapper (37 characters). */
    id: p.string().length(40).primary(),
    wrappedKey: p.text(),
    sealingUntil: p.datetime(),
    destroyAfter: p.datetime(),
  },
  indexes: [{ properties: ['destroyAfter'] }],
});
export class CardSecurityCodeKey extends CardSecurityCodeKeySchema.class {}
CardSecurityCodeKeySchema.setClass(CardSecurityCodeKey);
