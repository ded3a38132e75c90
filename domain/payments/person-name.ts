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
