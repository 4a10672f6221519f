import { type Principal, visibleEmail } from '../../services/principal.js';
import type { ViewFilters } from '../../services/views.js';
import type { SavedViewWithCreator } from '../../services/views.js';

export function presentView(view: SavedViewWithCreator, principal: Principal) {
  return {
    id: view.id,
    bucket_key: view.bucket_key,
    name: view.name,
    stream: view.stream,
    filters: JSON.parse(view.filters) as ViewFilters,
    created_at: view.created_at,
    updated_at: view.updated_at,
    created_by: {
      id: view.created_by,
      name: view.creator_name,
      email: visibleEmail(principal, view.creator_email),
    },
  };
}
