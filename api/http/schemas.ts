import { Type } from '@sinclair/typebox';

export const ErrorResponse = Type.Object(
  { success: Type.Literal(false), message: Type.String() },
  { $id: 'ErrorResponse', description: 'Request-level failure: nothing was created or changed' },
);

/** Headers of admin, status-list and mitigation routes (spec 5.2). */
export const AdminHeaders = Type.Object({
  authorization: Type.String({ description: 'API key, raw or as `Bearer <key>`' }),
  clientid: Type.String({ description: "The tenant's ClientId (parent company id)" }),
  useremail: Type.String({ description: 'E-mail of the person or group acting; recorded in the audit trail' }),
});

export const adminErrorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  429: ErrorResponse,
  500: ErrorResponse,
} as const;
