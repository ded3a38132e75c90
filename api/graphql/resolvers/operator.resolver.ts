import { Arg, Ctx, Mutation, Resolver } from 'type-graphql';
import { JSONObjectResolver } from 'graphql-scalars';
import { parseFixture } from '../../../services/provisioning/parse-fixture.ts';
import { provision } from '../../../services/provisioning/provision.ts';
import { TenantProvisioningType } from '../../../schema/graphql/provisioning.type.ts';
import { requireOperator, type GraphQLContext } from '../context.ts';

@Resolver()
export class OperatorResolver {
  @Mutation(() => [TenantProvisioningType], {
    description:
      'Operator only: applies a provisioning fixture (the same JSON format as `npm run provision`; see README). Idempotent; secrets created by this call are returned once.',
  })
  async provisionTenants(
    // Not class-validator's: it cannot read the prototype-less objects of an inline literal; parseFixture validates it.
    @Arg('fixture', () => JSONObjectResolver, { validate: false }) fixture: Record<string, unknown>,
    @Ctx() context: GraphQLContext,
  ): Promise<TenantProvisioningType[]> {
    requireOperator(context);
    const results = await provision({ em: context.em, secretBox: context.services.secretBox, fingerprintCard: context.services.cardVault.fingerprint, actor: 'operator:graphql' }, parseFixture(fixture));
    return results.map((tenant) => ({
      ...tenant,
      products: tenant.products.map((p) => ({ key: p.slug, id: String(p.id), change: p.change })),
      merchantAccounts: tenant.merchantAccounts.map((m) => ({ key: m.mid, id: String(m.id), change: m.change })),
      webhookEndpoints: tenant.webhookEndpoints.map((w) => ({ key: w.slug, id: w.id, change: w.change, secret: w.secret })),
    }));
  }
}
