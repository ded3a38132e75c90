import { Type, type Static } from '@sinclair/typebox';
import { Button, Heading, Section, Text } from '@react-email/components';
import { EmailLayout, buttonStyle } from './layout.tsx';
import { HttpUrl, Line } from './template-data.ts';

/** `welcome-membership`: greets a new member, names the plan and its benefits, and links to the login page. */
export const WelcomeMembershipData = Type.Object(
  {
    storeName: Type.Optional(Line(200)),
    memberName: Line(200),
    membershipName: Line(200),
    loginUrl: HttpUrl,
    startDate: Type.Optional(Line(100)),
    renewalDate: Type.Optional(Line(100)),
    benefits: Type.Optional(Type.Array(Line(300), { maxItems: 20 })),
    supportEmail: Type.Optional(Type.String({ format: 'email', maxLength: 320, description: 'An e-mail address, shown as text' })),
  },
  { additionalProperties: true },
);
export type WelcomeMembershipData = Static<typeof WelcomeMembershipData>;

export function WelcomeMembershipEmail(data: WelcomeMembershipData) {
  return (
    <EmailLayout
      preview={`Welcome to ${data.membershipName}`}
      footer={data.supportEmail ? `Questions? Write to ${data.supportEmail}.` : data.storeName ? `Sent by ${data.storeName}.` : undefined}
    >
      <Heading as="h1" style={{ fontSize: 24, margin: '0 0 16px' }}>
        Welcome, {data.memberName}!
      </Heading>
      <Text style={{ fontSize: 15 }}>
        Your {data.membershipName} membership{data.storeName ? ` at ${data.storeName}` : ''} is active
        {data.startDate ? ` from ${data.startDate}` : ''}.{data.renewalDate ? ` It renews on ${data.renewalDate}.` : ''}
      </Text>
      {data.benefits?.length ? (
        <Section>
          <Text style={{ fontSize: 15, fontWeight: 700, margin: '8px 0' }}>What you get</Text>
          {data.benefits.map((benefit, index) => (
            <Text key={index} style={{ fontSize: 15, margin: '4px 0' }}>
              • {benefit}
            </Text>
          ))}
        </Section>
      ) : null}
      <Section style={{ marginTop: 24 }}>
        <Button href={data.loginUrl} style={buttonStyle}>
          Log in to your account
        </Button>
      </Section>
    </EmailLayout>
  );
}
