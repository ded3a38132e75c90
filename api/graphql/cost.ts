import type { ComplexityEstimator } from 'graphql-query-complexity';

/**
 * Field costs for the complexity limit: every returned field costs 1 (graphql-query-complexity's simple estimator);
 * a list multiplies what each item selects by how many items it can hold, and a database round trip costs as much
 * as ten fields, so many small reads cost more than one large one.
 */
const ROUND_TRIP = 10;

/**
 * A list read by one query, sized by the page argument the caller sent (or the default the resolver applies). A size
 * below 1 is refused by its field, but only when that field runs: costed as sent, a negative one would take its cost
 * off the operation's total and let the other fields run past the limit. It costs the default.
 */
export function pageCost(sizeArgument: string, defaultSize: number): ComplexityEstimator {
  return ({ args, childComplexity }) => {
    const size = args[sizeArgument];
    return ROUND_TRIP + (typeof size === 'number' && size >= 1 ? size : defaultSize) * childComplexity;
  };
}

/** A list with no page argument, costed at the most items it is expected to hold; `roundTrips` when it queries. */
export function boundedListCost(maxItems: number, roundTrips = 0): ComplexityEstimator {
  return ({ childComplexity }) => roundTrips * ROUND_TRIP + maxItems * childComplexity;
}
