/** A failed delivery sent again on request, as a run of its own: its number (1 for the first) and the attempts before it. */
export interface Redelivery {
  readonly number: number;
  readonly attemptsBefore: number;
}

/**
 * How often one delivery may be sent again: each run makes the schedule's attempts, all kept and listed with the
 * delivery, so its attempts stay bounded (and the cost estimate of listing them true).
 */
export const MAX_REDELIVERIES = 5;
