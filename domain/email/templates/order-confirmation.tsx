import { Type, type Static } from '@sinclair/typebox';
import { Button, Column, Heading, Row, Section, Text } from '@react-email/components';
import { EmailLayout, buttonStyle } from './layout.tsx';
import { DisplayAmount, HttpUrl, Line, formatAmount } from './template-data.ts';

/**
 * `order-confirmation`: what a store sends after checkout. Lines and totals are shown as the store computed
 * them (see DisplayAmount); the template adds nothing up.
 */
export const OrderConfirmationData = Type.Object(
  {
    storeName: Type.Optional(Line(200)),
    customerName: Type.Optional(Line(200)),
    orderNumber: Line(100),
    orderDate: Type.Optional(Line(100)),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code' }),
    items: Type.Array(
      Type.Object({ name: Line(300), quantity: Type.Integer({ minimum: 1, maximum: 1_000_000 }), unitPrice: DisplayAmount, total: Type.Optional(DisplayAmount) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 200 },
    ),
    subtotal: Type.Optional(DisplayAmount),
    shipping: Type.Optional(DisplayAmount),
    tax: Type.Optional(DisplayAmount),
    discount: Type.Optional(DisplayAmount),
    total: DisplayAmount,
    shippingAddress: Type.Optional(Type.Array(Line(300), { maxItems: 10, description: 'Address lines' })),
    orderUrl: Type.Optional(HttpUrl),
  },
  { additionalProperties: true },
);
export type OrderConfirmationData = Static<typeof OrderConfirmationData>;

const cell = { fontSize: 14, margin: '4px 0' } as const;

export function OrderConfirmationEmail(data: OrderConfirmationData) {
  const money = (amount: string | number) => formatAmount(amount, data.currency);
  const totals: [string, string | number | undefined][] = [
    ['Subtotal', data.subtotal],
    ['Shipping', data.shipping],
    ['Tax', data.tax],
    ['Discount', data.discount],
  ];
  return (
    <EmailLayout preview={`Order ${data.orderNumber} confirmed`} footer={data.storeName ? `${data.storeName}: thank you for your order.` : undefined}>
      <Heading as="h1" style={{ fontSize: 24, margin: '0 0 8px' }}>
        Order {data.orderNumber} confirmed
      </Heading>
      <Text style={{ fontSize: 15 }}>
        {data.customerName ? `Hi ${data.customerName}, thank you for your order.` : 'Thank you for your order.'}
        {data.orderDate ? ` Placed on ${data.orderDate}.` : ''}
      </Text>
      <Section>
        {data.items.map((item, index) => (
          <Row key={index}>
            <Column>
              <Text style={cell}>
                {item.quantity} × {item.name}
              </Text>
            </Column>
            <Column align="right">
              <Text style={cell}>{money(item.total ?? item.unitPrice)}</Text>
            </Column>
          </Row>
        ))}
      </Section>
      <Section style={{ borderTop: '1px solid #e5e7eb', marginTop: 8 }}>
        {totals
          .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
          .map(([label, amount]) => (
            <Row key={label}>
              <Column>
                <Text style={cell}>{label}</Text>
              </Column>
              <Column align="right">
                <Text style={cell}>{money(amount)}</Text>
              </Column>
            </Row>
          ))}
        <Row>
          <Column>
            <Text style={{ ...cell, fontWeight: 700 }}>Total</Text>
          </Column>
          <Column align="right">
            <Text style={{ ...cell, fontWeight: 700 }}>{money(data.total)}</Text>
          </Column>
        </Row>
      </Section>
      {data.shippingAddress?.length ? (
        <Section style={{ marginTop: 16 }}>
          <Text style={{ ...cell, fontWeight: 700 }}>Shipping to</Text>
          {data.shippingAddress.map((line, index) => (
            <Text key={index} style={cell}>
              {line}
            </Text>
          ))}
        </Section>
      ) : null}
      {data.orderUrl ? (
        <Section style={{ marginTop: 24 }}>
          <Button href={data.orderUrl} style={buttonStyle}>
            View your order
          </Button>
        </Section>
      ) : null}
    </EmailLayout>
  );
}
