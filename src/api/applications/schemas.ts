import { Type } from '@sinclair/typebox';

const Url = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });

export const ApplicationCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  website_url: Url('http or https URL of the application'),
  callback_url: Url(
    'http or https URL the authorization step redirects to, without a #fragment; http://localhost and http://127.0.0.1 work for development',
  ),
  is_public: Type.Optional(
    Type.Boolean({
      description:
        'true for a client that cannot keep its secret (a browser or mobile app); it will have to use PKCE. Default false',
    }),
  ),
});

const applicationProperties = {
  client_id: Type.String(),
  name: Type.String(),
  website_url: Type.String(),
  callback_url: Type.String(),
  is_public: Type.Boolean(),
  created_at: Type.Integer(),
};

/** An application as listed: never its secret nor the secret's hash. */
export const ApplicationOut = Type.Object(applicationProperties);

export const ApplicationWithSecretOut = Type.Object({
  ...applicationProperties,
  client_secret: Type.String({ description: 'Shown this once; only its hash is kept' }),
});

export const ApplicationCreated = Type.Object({
  ...ApplicationWithSecretOut.properties,
  access_token: Type.String({
    description: "A personal access token for the owner's own account, with every scope (spec 5.2)",
  }),
});

export const ApplicationParams = Type.Object({ client_id: Type.String() });
