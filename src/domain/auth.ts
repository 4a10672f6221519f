import { type Static, Type } from '@sinclair/typebox';
import { StringEnum } from './schema.js';
import { AUTH_TYPES, SIGNATURE_TYPES } from './vocabulary.js';

export { AUTH_TYPES, SIGNATURE_TYPES };

export type AuthType = (typeof AUTH_TYPES)[number];

export type SignatureType = (typeof SIGNATURE_TYPES)[number];

const secret = () => Type.Optional(Type.String({ maxLength: 4_000 }));

/** An empty object means no authentication; otherwise `auth_type` selects the method. */
export const AuthSchema = Type.Object({
  auth_type: Type.Optional(StringEnum(AUTH_TYPES)),
  username: secret(),
  password: secret(),
  access_token: secret(),
  consumer_secret: secret(),
  consumer_key: secret(),
  token_secret: secret(),
  signature_type: Type.Optional(StringEnum(SIGNATURE_TYPES)),
});
export type AuthInput = Static<typeof AuthSchema>;

export type Auth =
  | Record<string, never>
  | { auth_type: 'basic'; username: string; password: string }
  | {
      auth_type: 'oauth_1';
      access_token: string;
      consumer_secret: string;
      consumer_key: string;
      token_secret: string;
      signature_type: SignatureType;
    }
  | { auth_type: 'client_certificate' };

/** Keeps only the properties of the chosen method, with empty strings for the ones not given. */
export function normalizeAuth(input: AuthInput | null | undefined): Auth {
  switch (input?.auth_type) {
    case undefined:
      return {};
    case 'basic':
      return { auth_type: 'basic', username: input.username ?? '', password: input.password ?? '' };
    case 'oauth_1':
      return {
        auth_type: 'oauth_1',
        access_token: input.access_token ?? '',
        consumer_secret: input.consumer_secret ?? '',
        consumer_key: input.consumer_key ?? '',
        token_secret: input.token_secret ?? '',
        signature_type: input.signature_type ?? 'auth_header',
      };
    case 'client_certificate':
      return { auth_type: 'client_certificate' };
  }
}
