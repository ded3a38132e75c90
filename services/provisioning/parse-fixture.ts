import { compile, createStrictAjv, describeSchemaError } from '../../domain/validation/json-schema.ts';
import { DomainError } from '../../domain/errors.ts';
import { ProvisioningFixture } from './fixture.schema.ts';

const validate = compile(createStrictAjv(), ProvisioningFixture);

/** Validates a provisioning fixture; the error names the first bad field by its path. */
export function parseFixture(value: unknown): ProvisioningFixture {
  if (validate(value)) return value;
  const first = validate.errors?.[0];
  throw new DomainError('validation', `Invalid fixture: ${first ? describeSchemaError(first, 'fixture') : 'unknown error'}`);
}
