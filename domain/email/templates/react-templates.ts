import { createElement, type FunctionComponent } from 'react';
import type { TSchema } from '@sinclair/typebox';
import { GenericData, GenericEmail } from './generic.tsx';
import { OrderConfirmationData, OrderConfirmationEmail } from './order-confirmation.tsx';
import { WelcomeMembershipData, WelcomeMembershipEmail } from './welcome-membership.tsx';

interface ReactTemplate {
  /** What `data` must hold; checked when the e-mail is accepted, so rendering later cannot fail on it. */
  readonly data: TSchema;
  readonly component: FunctionComponent<never>;
}

/** The built-in templates of `templateType: react` (spec 2.5), by `templateName`. */
export const REACT_TEMPLATES = {
  generic: { data: GenericData, component: GenericEmail },
  'order-confirmation': { data: OrderConfirmationData, component: OrderConfirmationEmail },
  'welcome-membership': { data: WelcomeMembershipData, component: WelcomeMembershipEmail },
} as const satisfies Record<string, ReactTemplate>;

export type ReactTemplateName = keyof typeof REACT_TEMPLATES;
export const REACT_TEMPLATE_NAMES = Object.keys(REACT_TEMPLATES) as ReactTemplateName[];

export function isReactTemplateName(name: string): name is ReactTemplateName {
  return Object.hasOwn(REACT_TEMPLATES, name);
}

export function reactTemplateElement(name: ReactTemplateName, data: Record<string, unknown>) {
  return createElement(REACT_TEMPLATES[name].component as FunctionComponent<Record<string, unknown>>, data);
}
