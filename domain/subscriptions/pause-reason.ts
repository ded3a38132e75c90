/**
 * Why the gateway itself paused a subscription's billing: `charge_uncertain`, a failed rebill that may have charged
 * the card all the same (a resume asks the processor about its order before charging the period again; or the
 * merchant cancels). A pause the merchant asked for has no reason.
 */
export type PauseReason = 'charge_uncertain';
