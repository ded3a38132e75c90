import { Type, type Static } from '@sinclair/typebox';
import { Button, Heading, Section, Text } from '@react-email/components';
import { EmailLayout, buttonStyle } from './layout.tsx';
import { HttpUrl, Line } from './template-data.ts';

/** `generic` (spec 2.5): a heading, body text and an optional call-to-action button. */
export const GenericData = Type.Object(
  {
    heading: Line(200),
    bodyContent: Type.String({ minLength: 1, maxLength: 20_000, description: 'Plain text; blank lines separate paragraphs' }),
    ctaText: Type.Optional(Line(100)),
    ctaUrl: Type.Optional(HttpUrl),
  },
  // A button needs both its words and its link: one without the other is a caller's mistake, not a mail without one.
  { additionalProperties: true, dependencies: { ctaText: ['ctaUrl'], ctaUrl: ['ctaText'] } },
);
export type GenericData = Static<typeof GenericData>;

export function GenericEmail(data: GenericData) {
  const paragraphs = data.bodyContent.split(/\n\s*\n/);
  return (
    <EmailLayout preview={data.heading}>
      <Heading as="h1" style={{ fontSize: 24, margin: '0 0 16px' }}>
        {data.heading}
      </Heading>
      {paragraphs.map((paragraph, index) => (
        <Text key={index} style={{ fontSize: 15, lineHeight: '24px', whiteSpace: 'pre-line' }}>
          {paragraph}
        </Text>
      ))}
      {data.ctaText && data.ctaUrl ? (
        <Section style={{ marginTop: 24 }}>
          <Button href={data.ctaUrl} style={buttonStyle}>
            {data.ctaText}
          </Button>
        </Section>
      ) : null}
    </EmailLayout>
  );
}
