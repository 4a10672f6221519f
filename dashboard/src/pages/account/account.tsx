import { Empty, PageHeader, TabLinks } from '../../components/ui';
import { paths, useSession } from '../../session';
import { AgentsSection } from './agents';
import { ApplicationsSection } from './applications';
import { IntegrationsSection } from './integrations';
import { ProfileSection } from './profile';
import { TeamSection } from './team';
import { TokensSection } from './tokens';
import './account.css';

/** The account's sections, each a route (`/account/<section>`); the profile is the default. */
const SECTIONS = [
  { section: '', label: 'Profile', view: ProfileSection },
  { section: 'applications', label: 'Applications', view: ApplicationsSection },
  { section: 'tokens', label: 'Access tokens', view: TokensSection },
  { section: 'team', label: 'Team', view: TeamSection },
  { section: 'integrations', label: 'Integrations', view: IntegrationsSection },
  { section: 'agents', label: 'Agents & regions', view: AgentsSection },
] as const;

/** `/account/:section?`: profile, client applications, tokens, teams, team integrations, agents and regions. */
export function AccountPage(props: { section: string }) {
  const { account } = useSession();
  const current = SECTIONS.find((s) => s.section === props.section);
  const View = current?.view;
  return (
    <div class="account-page">
      <PageHeader title="Account" subtitle={account.name} />
      <TabLinks
        label="Account sections"
        tabs={SECTIONS.map((s) => ({
          href: paths.account(s.section),
          label: s.label,
          current: s.section === props.section,
        }))}
      />
      {View ? <View /> : <Empty>There is no such account page.</Empty>}
    </div>
  );
}
