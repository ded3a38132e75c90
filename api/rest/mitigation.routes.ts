import { Type } from '@sinclair/typebox';
import { parseMitigationFilter, parseMitigationPage } from '../../domain/mitigation/search.ts';
import { searchTransactions } from '../../services/mitigation/search-transactions.ts';
import { MitigationSearchInput } from '../../schema/inputs/mitigation-search.input.ts';
import { adminCallerOf } from '../http/authentication.ts';
import { AdminHeaders, errorResponses, ref } from '../http/schemas.ts';
import { API_KEY_REQUIRED } from '../http/security.ts';
import type { TypedApp } from '../http/typed-app.ts';

const text = () => Type.Union([Type.String(), Type.Null()]);

/** A mitigation transaction record (spec 2.8). */
export const MitigationTransactionRecord = Type.Object(
  {
    gateway: Type.String(),
    transactionId: Type.String({ format: 'uuid' }),
    orderId: Type.Integer(),
    sent: Type.String({ format: 'date-time', description: 'Authorization time' }),
    email: Type.String(),
    sandbox: Type.Boolean(),
    applicationId: Type.Integer(),
    status: Type.String(),
    statusId: Type.Integer(),
    success: Type.Boolean(),
    completed: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the outcome became final (capture)' }),
    currency: Type.String(),
    amount: Type.Number(),
    mid: text(),
    descriptor: text(),
    customerId: Type.Integer(),
    authCode: text(),
    gatewayTransactionId: text(),
    firstName: text(),
    lastName: text(),
    bin: Type.String({ description: 'First 6 digits of the card (what the `bin` filter takes)' }),
    last4: Type.String(),
    refunded: Type.Boolean({ description: 'A successful refund refers to this transaction' }),
    refundable: Type.Boolean({ description: 'An approved authorization, not charged back, with an amount left to refund' }),
    hasAlert: Type.Boolean(),
    chargedBack: Type.Boolean(),
    originalTransactionId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'On a refund only: the transaction it refunds (null on authorizations and voids)' }),
  },
  { $id: 'MitigationTransaction', description: 'A transaction as the mitigation search answers it (spec 2.8)' },
);

const SearchAnswer = Type.Object(
  {
    success: Type.Literal(true),
    message: Type.String(),
    count: Type.Integer({ description: 'Records in this page' }),
    pageNumber: Type.Integer(),
    moreResults: Type.Boolean({ description: 'Another page has at least one record' }),
    transactions: Type.Array(ref(MitigationTransactionRecord)),
  },
  { description: 'One page, newest authorization first (ties by transaction id)' },
);

/** Advanced transaction search for mitigation (spec 4.10); GraphQL `mitigationTransactions` runs the same search. */
export function mitigationRoutes(app: TypedApp): void {
  app.addSchema(MitigationTransactionRecord);
  app.post('/api/mitigation/transactions', {
    schema: {
      operationId: 'searchMitigationTransactions',
      summary: "Searches the tenant's transactions (spec 4.10): filters combine with AND, an array matches any of its values",
      tags: ['admin'],
      security: API_KEY_REQUIRED,
      headers: AdminHeaders,
      body: MitigationSearchInput,
      response: { 200: SearchAnswer, ...errorResponses(400, 401, 403, 413, 415, 429, 500) },
    },
    async handler(request) {
      const caller = adminCallerOf(request);
      const page = parseMitigationPage(request.body);
      const filter = parseMitigationFilter(request.body);
      const result = await searchTransactions(request.em, {
        tenantId: caller.tenantId,
        filter,
        page: { offset: (page.pageNumber - 1) * page.limit, limit: page.limit },
      });
      const transactions = result.records.map(({ cursor: _cursor, productId: _product, merchantAccountId: _account, ...record }) => record);
      return { success: true as const, message: `${transactions.length} ${transactions.length === 1 ? 'transaction' : 'transactions'}`, count: transactions.length, pageNumber: page.pageNumber, moreResults: result.moreResults, transactions };
    },
  });
}
