/**
 * Why the gateway itself paused a subscription's billing: `charge_uncertain`, a failed rebill that may have charged
 * the card all the same (the merchant asks the processor about its order, then resumes or cancels). A pause the
 * merchant asked for has no reason.
 */
export type PauseReason = 'charge_uncertain';
