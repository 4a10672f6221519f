import type { ClientApplication } from '../../services/applications.js';

/** An application row as the API shows it: everything but the secret's hash. */
export function presentApplication(application: ClientApplication) {
  return {
    client_id: application.client_id,
    name: application.name,
    website_url: application.website_url,
    callback_url: application.callback_url,
    is_public: application.is_public === 1,
    created_at: application.created_at,
  };
}
