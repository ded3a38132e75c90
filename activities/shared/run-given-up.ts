import { asyncLocalStorage } from '@temporalio/activity';

/**
 * Whether Temporal gave up the activity running this code (it timed out, was cancelled, or its worker is stopping).
 * Such a run is not stopped: it goes on until it ends by itself, while its workflow moves on, possibly to a run of
 * the same step beside it. For a local activity that timed out, the SDK's core cancels the run as it reports the
 * timeout to the workflow, so the signal is set before any run that replaces it starts. Outside an activity (a direct
 * call), never.
 */
export function runGivenUp(): boolean {
  return asyncLocalStorage.getStore()?.cancellationSignal.aborted === true;
}

/**
 * When Temporal gives up the activity running this code (its attempt's start-to-close limit, counted from when the
 * attempt was scheduled, so never later than Temporal's own); undefined outside an activity (a direct call).
 */
export function attemptDeadlineMs(): number | undefined {
  const info = asyncLocalStorage.getStore()?.info;
  return info ? info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs : undefined;
}
