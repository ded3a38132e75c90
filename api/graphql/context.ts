import { timingSafeEqual, createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { authenticateApiKey } from '../../services/auth/authenticate-api-key.ts';
import { type ApiPrincipal } from '../../domain/auth/api-key.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Logger } from '../../domain/logger.ts';
import type { GatewayServices } from '../gateway-deps.ts';
import type { AnswerBudget } from './answer-budget.ts';
import type { GraphQLLoaders } from './loaders.ts';

export type GraphQLCaller = { kind: 'anonymous' } | { kind: 'operator' } | { kind: 'tenant'; principal: ApiPrincipal };

export interface GraphQLContext {
  readonly em: EntityManager;
  readonly caller: GraphQLCaller;
  readonly services: GatewayServices;
  /** Batched per-parent look-ups, fresh for each request. */
  readonly loaders: GraphQLLoaders;
  /** The request's logger (its request id). */
  readonly log: Logger;
  /** How much stored lead data the answer may still carry. */
  readonly answerBudget: AnswerBudget;
}

function sameSecret(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Who is calling: the operator token (provisioning), a tenant API key (scoped to that tenant and
 * rate-limited like REST), or nobody (`__typename` only).
 */
export async function resolveCaller(services: GatewayServices, authorization: string | undefined): Promise<GraphQLCaller> {
  if (!authorization) return { kind: 'anonymous' };
  const token = authorization.replace(/^bearer\s+/i, '').trim();
  if (services.operatorToken && sameSecret(token, services.operatorToken)) return { kind: 'operator' };
  const principal = await authenticateApiKey(authorization, services.rateLimit);
  return { kind: 'tenant', principal };
}

export function requireOperator(context: GraphQLContext): void {
  if (context.caller.kind !== 'operator') {
    throw new DomainError(context.caller.kind === 'anonymous' ? 'unauthenticated' : 'forbidden', 'This operation needs the operator token');
  }
}

/** The tenant a query reads: the caller's own, or for the operator the one asked for. */
export function requireTenant(context: GraphQLContext, requestedTenantId?: number | null): number {
  const { caller } = context;
  if (caller.kind === 'anonymous') throw new DomainError('unauthenticated', 'Send an API key or the operator token in the Authorization header');
  if (caller.kind === 'operator') {
    if (requestedTenantId === undefined || requestedTenantId === null) throw new DomainError('validation', 'tenantId is required for the operator', { field: 'tenantId' });
    return requestedTenantId;
  }
  if (requestedTenantId !== undefined && requestedTenantId !== null && requestedTenantId !== caller.principal.tenantId) {
    throw new DomainError('forbidden', 'An API key reads only its own tenant');
  }
  return caller.principal.tenantId;
}

export function requireCaller(context: GraphQLContext): void {
  if (context.caller.kind === 'anonymous') throw new DomainError('unauthenticated', 'Send an API key or the operator token in the Authorization header');
}

/** Who an audit entry names for a change asked through GraphQL: the operator, or the tenant's API key by its id. */
export function actorOf(context: GraphQLContext): string {
  const { caller } = context;
  if (caller.kind === 'operator') return 'operator:graphql';
  if (caller.kind === 'tenant') return `api_key:${caller.principal.apiKeyId}`;
  return 'anonymous';
}
