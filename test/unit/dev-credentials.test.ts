import { describe, expect, it } from 'vitest';
import { describeCredentials } from '../../scripts/local-stack/dev-credentials.ts';

describe("npm start's credential lines", () => {
  it('print the development secrets kept under DATA_DIR', () => {
    const lines = describeCredentials({ operatorToken: 'dev-token-1', dataEncryptionKey: 'ZGV2LWtleQ==' }).join('\n');
    expect(lines).toContain('dev-token-1');
    expect(lines).toContain('ZGV2LWtleQ==');
  });

  it('name the secrets set in the environment (production) without printing them', () => {
    const lines = describeCredentials({ operatorToken: undefined, dataEncryptionKey: undefined });
    expect(lines).toContain('Operator token   from OPERATOR_TOKEN (not printed)');
    expect(lines).toContain('Encryption key   from DATA_ENCRYPTION_KEY (not printed)');
  });
});
