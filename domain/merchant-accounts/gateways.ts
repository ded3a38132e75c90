/**
 * The stable id of each processor gateway adapter (spec 2.6 `gatewayId`), fixed here so that one gateway name always
 * answers one id, whichever account or fixture it comes from. A new adapter gets the next number; numbers are never
 * reused.
 */
export const GATEWAY_IDS: Readonly<Record<string, number>> = { sandbox: 1 };

/**
 * `gatewayId` of an account: its adapter's stable id; for a gateway name this table does not know (a provisioned name
 * without an adapter here), the id provisioning stored, else null.
 */
export function gatewayIdOf(gateway: string, stored: number | null): number | null {
  return Object.hasOwn(GATEWAY_IDS, gateway) ? GATEWAY_IDS[gateway]! : stored;
}
