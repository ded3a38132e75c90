import { validationError } from '../errors.ts';

/** The longest name kept (the name columns are `varchar(100)`), in characters (code points) of its composed form. */
export const NAME_MAX_LENGTH = 100;

/**
 * A person's name as it is kept and searched: without the spaces around it and in one Unicode form (NFC), so the name
 * a search types finds the name a checkout sent (`Ada ` and `Ada`, `ó` composed or not). Blank is no name.
 */
export function keptName(text: string | undefined): string | undefined {
  const name = text?.trim().normalize('NFC');
  return name ? name : undefined;
}

/** A cardholder's name as first and last name: its first word, then the rest (`Ada King Lovelace`: `Ada`, `King Lovelace`). */
export function namesOfHolder(holder: string | undefined): { firstName?: string; lastName?: string } {
  const words = keptName(holder)?.split(/\s+/) ?? [];
  return { firstName: words[0], lastName: keptName(words.slice(1).join(' ')) };
}

/**
 * Refuses, before anything is written, a name longer than a name may be once kept: NFC can lengthen text (U+FB2C,
 * excluded from composition, becomes three characters), so a name within the schema's 100 characters as sent may not fit as kept.
 */
export function refuseOverlongNames(names: Readonly<Record<string, string | undefined>>): void {
  for (const [field, text] of Object.entries(names)) {
    const kept = keptName(text);
    if (kept !== undefined && [...kept].length > NAME_MAX_LENGTH) {
      throw validationError(field, `${field} must be at most ${NAME_MAX_LENGTH} characters once composed (Unicode NFC)`);
    }
  }
}
