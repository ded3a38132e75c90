import { defineUpdate } from '@temporalio/workflow';
import type { SubmitResult } from '../../domain/payments/submit-result.ts';

/** Returns the submit result as soon as the authorization outcome is known (early return). */
export const submitUpdate = defineUpdate<SubmitResult>('submit');

/** Sent by `POST /api/{productId}/3ds` after the cardholder's challenge; returns the final result. */
export const completeThreeDSecureUpdate = defineUpdate<SubmitResult, [{ threeDSecureId: string }]>('complete3ds');
