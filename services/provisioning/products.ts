import { CARD_NETWORKS } from '../../domain/catalog/product.ts';
import { toMoneyString } from '../../domain/money.ts';
import { Product } from '../../schema/entities/index.ts';
import { assignChanges, type ChangeKind } from './changes.ts';
import type { TenantFixture } from './fixture.schema.ts';
import type { TenantScope } from './tenant-scope.ts';
import { applicationOf } from './tenant.ts';

type ProductFixture = NonNullable<TenantFixture['products']>[number];

/** Products matched by slug, with the defaults a fixture may leave out (all networks, velocity limits). */
export async function provisionProducts({ em, tenant, audit, defaultApplication }: TenantScope, fixtures: readonly ProductFixture[]): Promise<{ slug: string; id: number; change: ChangeKind }[]> {
  const results: { slug: string; id: number; change: ChangeKind }[] = [];
  for (const fixture of fixtures) {
    let product = await em.findOne(Product, { tenant, slug: fixture.slug }, { populate: ['application'] });
    // Naming no application, a product stays where it is (a re-run never moves what leads it pays); a new one goes to
    // the fixture's first application.
    const application = fixture.application || !product ? await applicationOf(em, tenant, fixture.application ?? defaultApplication) : product.application;
    const values = { ...productValues(fixture), application };
    let change: ChangeKind;
    if (!product) {
      product = em.create(Product, { tenant, slug: fixture.slug, ...values });
      change = 'created';
    } else {
      change = assignChanges(product, values);
    }
    await em.flush();
    if (change !== 'unchanged') audit(`product.${change}`, 'Product', product.id, { ...values, application: values.application.slug });
    results.push({ slug: product.slug, id: product.id, change });
  }
  return results;
}

function productValues(fixture: ProductFixture) {
  const plan = fixture.subscriptionPlan;
  return {
    name: fixture.name,
    price: toMoneyString(fixture.price, `products.${fixture.slug}.price`),
    currency: fixture.currency,
    acceptedNetworks: fixture.acceptedNetworks ?? [...CARD_NETWORKS],
    subscriptionPlan: plan
      ? {
          recurringAmount: toMoneyString(plan.recurringAmount, `products.${fixture.slug}.subscriptionPlan.recurringAmount`),
          intervalDays: plan.intervalDays,
          trialDays: plan.trialDays ?? 0,
          gracePeriodDays: plan.gracePeriodDays ?? 0,
          ...(plan.intervalSeconds === undefined ? {} : { intervalSeconds: plan.intervalSeconds }),
          ...(plan.trialSeconds === undefined ? {} : { trialSeconds: plan.trialSeconds }),
          ...(plan.dunning === undefined ? {} : { dunning: plan.dunning }),
        }
      : null,
    cardSubmitLimit: fixture.velocity?.cardSubmitLimit ?? 3,
    cardSubmitWindowSeconds: fixture.velocity?.cardSubmitWindowSeconds ?? 600,
    emailSubmitLimit: fixture.velocity?.emailSubmitLimit ?? 5,
  };
}
