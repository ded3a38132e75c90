import { Migration } from '@mikro-orm/migrations';

/**
 * How a payment takes its money, kept on its order from the moment it opens: `automatic` (charged with its
 * authorization) or `manual` (`capture: false`, held until a capture or void). A capture asked of a payment charged
 * at once is refused instead of answering it as captured, which told its caller a capture happened. Orders opened
 * before keep none: a capture of one is answered as before.
 */
export class Migration20261128000037_order_capture_method extends Migration {

  override name = 'Migration20261128000037_order_capture_method';

  override up(): void | Promise<void> {
    this.addSql(`alter table "orders" add column "capture_method" text null;`);
    this.addSql(`alter table "orders" add constraint "orders_capture_method_check" check ("capture_method" in ('automatic', 'manual'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "orders" drop column "capture_method";`);
  }

}
