import { ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';

/** gRPC statuses by which Temporal says it could not be reached or answer in time, not that it refused the call. */
const OUTAGE_STATUSES = new Set([
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  14, // UNAVAILABLE
]);

/** Whether a Temporal client call failed with this gRPC status (the gRPC and the native connection nest it differently). */
export function hasGrpcStatus(error: unknown, status: number): boolean {
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++, cause = cause.cause) {
    if ((cause as { code?: unknown }).code === status) return true;
  }
  return false;
}

/**
 * Whether Temporal refused an update because the workflow task it would run in keeps failing or timing out (its
 * worker stalled or gone mid-task: FAILED_PRECONDITION, "Workflow Task in failed state"). Other refusals with that
 * status (a paused workflow, a run out of updates) are not this.
 */
export function isUpdateRefusedForFailingTask(error: unknown): boolean {
  if (!hasGrpcStatus(error, 9)) return false;
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++, cause = cause.cause) {
    if (/Workflow Task in failed state/i.test(cause.message)) return true;
  }
  return false;
}

/**
 * Whether a failure of a Temporal client call is Temporal being away (the server down, unreachable or overloaded):
 * the client's `ServiceError` with such a gRPC status somewhere in its causes (the gRPC and the native connection nest
 * them differently), or an update call that timed out. The request may have reached Temporal before it went away.
 */
export function isTemporalOutage(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  if (!(error instanceof ServiceError)) return false;
  return [...OUTAGE_STATUSES].some((status) => hasGrpcStatus(error, status));
}
