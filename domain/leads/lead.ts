import type { LeadEnvironment } from './lead-keys.ts';

/** `lead` on creation; `paid` once a matching successful payment marks it (spec 3.2). Only the gateway moves it. */
export const LEAD_STATUSES = ['lead', 'paid'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** Limits of a lead write (spec 2.4 and 8; the rest decided in docs/decisions.md). */
export const LEAD_LIMITS = {
  email: 320,
  sessionId: 255,
  name: 200,
  phone: 50,
  scans: 500,
  scanPage: 2048,
  /** `cfa_*` and `d2d_*` fields per request, their name and value lengths. */
  trackingFields: 50,
  trackingFieldName: 64,
  trackingFieldValue: 1000,
  /** Decoded size of `pending_data_b64`. */
  pendingDataBytes: 32 * 1024,
  /** How deep a scan or the pending data may nest objects and arrays (as e-mail template data). */
  jsonDepth: 32,
} as const;

/** Names a CFA or D2D field may take: the prefix, then lowercase letters, digits and underscores. */
export const TRACKING_FIELD_NAME = /^(cfa|d2d)_[a-z0-9_]{1,60}$/;

export interface LeadScan {
  readonly page: string;
  readonly [key: string]: unknown;
}

/** What a client may write; absent optional fields keep their stored value on an update. */
export interface LeadWrite {
  readonly sessionId: string;
  readonly email: string;
  readonly firstName?: string;
  readonly lastName?: string;
  readonly phone?: string;
  readonly scans?: readonly LeadScan[];
  readonly pendingData?: Record<string, unknown>;
  /** `cfa_*` and `d2d_*` fields by their full name; merged into the stored ones. */
  readonly trackingFields: Readonly<Record<string, string>>;
}

/** The payment identifiers captured when the lead first became paid (spec 2.4: not a history). */
export interface LeadPayment {
  readonly transactionId: string;
  readonly orderId: number;
  readonly amount: string;
  readonly currency: string;
  readonly subscriptionId: number | null;
  readonly paidAt: Date;
}

/** A stored lead, complete; the tenant is never part of it. */
export interface LeadRecord {
  readonly id: string;
  readonly sessionId: string;
  readonly email: string;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly phone: string | null;
  readonly scans: LeadScan[];
  readonly pendingData: Record<string, unknown> | null;
  readonly trackingFields: Record<string, string>;
  readonly status: LeadStatus;
  readonly applicationId: number;
  readonly environment: LeadEnvironment;
  readonly transactionId: string | null;
  readonly orderId: number | null;
  readonly amount: string | null;
  readonly currency: string | null;
  readonly subscriptionId: number | null;
  readonly paidAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}
