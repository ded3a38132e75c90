import { Args, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { findEmail, listEmailEvents, listEmails } from '../../../data/queries/emails.ts';
import type { EmailRecord } from '../../../domain/email/email-record.ts';
import { decodeEmailCursor, encodeEmailCursor, EMAIL_PAGE_SIZE } from '../../../domain/email/email-query.ts';
import type { EmailStatus } from '../../../domain/email/email-status.ts';
import { DomainError } from '../../../domain/errors.ts';
import { replaceSenderDomains } from '../../../services/email/sender-domains.ts';
import { EmailArgs, EmailConnectionType, EmailsArgs, EmailSenderDomainsType, EmailType, SetEmailSenderDomainsArgs } from '../../../schema/graphql/email.type.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireOperator, requireTenant, type GraphQLContext } from '../context.ts';
import { pageCost } from '../cost.ts';
import { isSearchableInstant, SEARCH_YEARS } from '../../../domain/validation/timestamps.ts';

/** E-mails with their histories, read in one look-up for all of them. */
async function withEvents(em: EntityManager, emails: readonly EmailRecord[]): Promise<EmailType[]> {
  const events = emails.length === 0 ? [] : await listEmailEvents(em, emails.map((email) => email.id));
  return emails.map((email) => ({
    ...email,
    to: [...email.to],
    cc: [...email.cc],
    bcc: [...email.bcc],
    events: events.filter((event) => event.emailId === email.id),
  }));
}

@Resolver()
export class EmailResolver {
  @Query(() => EmailType, { nullable: true, description: "One of the tenant's e-mails by id, with its status history; null when the tenant has none with this id" })
  async email(@Args(() => EmailArgs) args: EmailArgs, @Ctx() context: GraphQLContext): Promise<EmailType | null> {
    const tenantId = requireTenant(context, args.tenantId);
    const email = await findEmail(context.em, tenantId, args.id);
    return email ? (await withEvents(context.em, [email]))[0]! : null;
  }

  @Query(() => EmailConnectionType, {
    description: "The tenant's e-mails, newest first; filters combine with AND",
    complexity: pageCost('first', EMAIL_PAGE_SIZE.default),
  })
  async emails(@Args(() => EmailsArgs) args: EmailsArgs, @Ctx() context: GraphQLContext): Promise<EmailConnectionType> {
    const tenantId = requireTenant(context, args.tenantId);
    const first = args.first ?? EMAIL_PAGE_SIZE.default;
    const after = args.after ? decodeEmailCursor(args.after) : undefined;
    if (args.after && !after) throw new DomainError('validation', 'after is not a cursor of this list', { field: 'after' });
    for (const field of ['createdAfter', 'createdBefore'] as const) {
      const instant = args[field];
      if (instant && !isSearchableInstant(instant)) {
        throw new DomainError('validation', `${field} must fall in the years ${SEARCH_YEARS.min} to ${SEARCH_YEARS.max} (UTC)`, { field });
      }
    }
    const filter = {
      status: (args.status ?? undefined) as EmailStatus | undefined,
      batchId: args.batchId ?? undefined,
      createdAfter: args.createdAfter ?? undefined,
      createdBefore: args.createdBefore ?? undefined,
    };
    // One more than asked says whether another page follows.
    const rows = await listEmails(context.em, { tenantId, filter, limit: first + 1, after });
    const page = rows.slice(0, first);
    const nodes = await withEvents(context.em, page);
    const edges = page.map((row, index) => ({ cursor: encodeEmailCursor(row.cursor), node: nodes[index]! }));
    return { edges, pageInfo: { hasNextPage: rows.length > first, endCursor: edges.at(-1)?.cursor ?? null } };
  }

  @Mutation(() => EmailSenderDomainsType, { description: 'Operator only: replaces the domains a tenant may send e-mail from (spec 5.4)' })
  async setEmailSenderDomains(@Args(() => SetEmailSenderDomainsArgs) args: SetEmailSenderDomainsArgs, @Ctx() context: GraphQLContext): Promise<EmailSenderDomainsType> {
    requireOperator(context);
    const result = await replaceSenderDomains(context.em, { tenantId: args.tenantId, domains: args.domains, actor: 'operator' });
    return { ...result, domains: [...result.domains] };
  }
}
