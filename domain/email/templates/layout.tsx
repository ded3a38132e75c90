import type { ReactNode } from 'react';
import { Body, Container, Head, Hr, Html, Preview, Text } from '@react-email/components';

/** The frame every built-in template shares: one column, readable without images, a footer naming the sender. */
export function EmailLayout(props: { preview: string; footer?: string; children: ReactNode }) {
  return (
    <Html lang="en">
      <Head />
      <Preview>{props.preview}</Preview>
      <Body style={{ backgroundColor: '#f6f7f9', fontFamily: 'Helvetica, Arial, sans-serif', margin: 0, padding: '24px 0' }}>
        <Container style={{ backgroundColor: '#ffffff', borderRadius: 8, padding: '32px', maxWidth: 560 }}>
          {props.children}
          {props.footer ? (
            <>
              <Hr style={{ borderColor: '#e5e7eb', margin: '32px 0 16px' }} />
              <Text style={{ color: '#6b7280', fontSize: 12, margin: 0 }}>{props.footer}</Text>
            </>
          ) : null}
        </Container>
      </Body>
    </Html>
  );
}

export const buttonStyle = {
  backgroundColor: '#111827',
  borderRadius: 6,
  color: '#ffffff',
  display: 'inline-block',
  fontSize: 15,
  fontWeight: 600,
  padding: '12px 20px',
  textDecoration: 'none',
} as const;
