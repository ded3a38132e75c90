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

/**
 * The template's element with the fields its schema names as props, and nothing else: data may carry more (the
 * schemas allow it), and React takes some prop names for itself (`key`, `ref`), so a `key` of `{"toString": 1}` that
 * was accepted would fail the render in the worker.
 */
export function reactTemplateElement(name: ReactTemplateName, data: Readonly<Record<string, unknown>>) {
  const named = Object.keys(REACT_TEMPLATES[name].data.properties as Record<string, unknown>);
  const props = Object.fromEntries(named.filter((field) => Object.hasOwn(data, field)).map((field) => [field, data[field]]));
  return createElement(REACT_TEMPLATES[name].component as FunctionComponent<Record<string, unknown>>, props);
}
