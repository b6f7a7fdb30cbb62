/**
 * The integrations kiln carries out, with the settings the Service's API takes for each
 * (lib/api/helpers/integrations_helpers.rb: name, type, whether required) and the events each
 * supports (its model's supported_events, app/models/integrations/*.rb), which become optional
 * `<event>_events` flags of its PUT. Secret settings (the models' password-type fields) are
 * sealed at rest and never returned. Only integrations kiln acts on are offered.
 */
export type EventFlag =
  | 'push_events' | 'issues_events' | 'merge_requests_events' | 'tag_push_events' | 'note_events'
  | 'confidential_note_events' | 'commit_events' | 'confidential_issues_events' | 'pipeline_events'
  | 'wiki_page_events' | 'job_events' | 'deployment_events';

export interface IntegrationSetting {
  name: string;
  type: 'string' | 'boolean' | 'choice';
  required: boolean;
  secret: boolean;
  description: string;
  choices?: readonly string[];
  /** The value an integration set up without it has (the model's default). */
  default?: string | boolean;
}

export interface IntegrationKind {
  slug: string;
  title: string;
  settings: IntegrationSetting[];
  events: EventFlag[];
}

/** EmailsOnPush#branches_to_be_notified choices (Integrations::BaseChatNotification's BRANCH_CHOICES). */
export const BRANCH_CHOICES = ['all', 'default', 'protected', 'default_and_protected'] as const;


/**
 * The settings of the Slack-format chat integrations (integrations_helpers.rb's
 * chat_notification_settings and BaseChatNotification's event channels): the webhook URL is a
 * secret; a chat integration starts notifying only broken pipelines of the default branch.
 * Slack and Mattermost hear every event BaseChatNotification supports, deployments included;
 * Discord, Microsoft Teams and Google Chat all but deployments (their models' supported_events).
 */
const CHAT_EVENTS: EventFlag[] = [
  'push_events', 'issues_events', 'confidential_issues_events', 'merge_requests_events', 'note_events',
  'confidential_note_events', 'tag_push_events', 'pipeline_events', 'wiki_page_events', 'deployment_events',
];
const MARKDOWN_CHAT_EVENTS = CHAT_EVENTS.filter((e) => e !== 'deployment_events');
const CHAT_CHANNELS = [
  'push', 'issue', 'confidential_issue', 'merge_request', 'note', 'confidential_note', 'tag_push', 'pipeline', 'wiki_page', 'deployment',
];

function chatSettings(service: string): IntegrationSetting[] {
  return [
    { name: 'webhook', type: 'string', required: true, secret: true, description: `The ${service} webhook URL` },
    { name: 'username', type: 'string', required: false, secret: false, description: 'The name the messages are posted as' },
    {
      name: 'channel', type: 'string', required: false, secret: false,
      description: 'The default channel to use if others are not configured',
    },
    {
      name: 'notify_only_broken_pipelines', type: 'boolean', required: false, secret: false, default: true,
      description: 'Send notifications for broken pipelines only',
    },
    {
      name: 'branches_to_be_notified', type: 'choice', required: false, secret: false, choices: BRANCH_CHOICES, default: 'default',
      description: 'Branches to send notifications for: all, default, protected or default_and_protected',
    },
    ...CHAT_CHANNELS.map((event): IntegrationSetting => ({
      name: `${event}_channel`, type: 'string', required: false, secret: false,
      description: `The name of the channel to receive ${event.replaceAll('_', ' ')} events notifications`,
    })),
  ];
}

export const INTEGRATIONS: readonly IntegrationKind[] = [
  {
    slug: 'asana',
    title: 'Asana',
    settings: [
      { name: 'api_key', type: 'string', required: true, secret: true, description: 'User API token for Asana' },
      {
        name: 'restrict_to_branch', type: 'string', required: false, secret: false,
        description: 'Comma-separated list of branches to be automatically inspected; all branches when empty',
      },
    ],
    events: ['push_events'],
  },
  {
    slug: 'emails-on-push',
    title: 'Emails on push',
    settings: [
      {
        name: 'recipients', type: 'string', required: true, secret: false,
        description: 'Recipient email addresses separated by commas or white space',
      },
      { name: 'disable_diffs', type: 'boolean', required: false, secret: false, description: 'Do not include code diffs' },
      {
        name: 'send_from_committer_email', type: 'boolean', required: false, secret: false,
        description: "Send from the committer's email address when its domain is the instance's",
      },
      {
        name: 'branches_to_be_notified', type: 'choice', required: false, secret: false,
        choices: BRANCH_CHOICES, default: 'all',
        description: 'Branches whose pushes send a mail: all, default, protected or default_and_protected',
      },
    ],
    events: ['push_events', 'tag_push_events'],
  },
  // Integrations::PipelinesEmail (integrations_helpers.rb's pipelines-email settings, 15.2).
  {
    slug: 'pipelines-email',
    title: 'Pipeline status emails',
    settings: [
      {
        name: 'recipients', type: 'string', required: true, secret: false,
        description: 'Comma-separated list of recipient email addresses',
      },
      {
        name: 'notify_only_broken_pipelines', type: 'boolean', required: false, secret: false, default: true,
        description: 'Notify only broken pipelines',
      },
      {
        name: 'notify_only_default_branch', type: 'boolean', required: false, secret: false,
        description: 'Send notifications only for the default branch (older setting; branches_to_be_notified wins)',
      },
      {
        name: 'branches_to_be_notified', type: 'choice', required: false, secret: false, choices: BRANCH_CHOICES, default: 'default',
        description: 'Branches to send notifications for: all, default, protected or default_and_protected',
      },
    ],
    events: ['pipeline_events'],
  },
  { slug: 'slack', title: 'Slack notifications', settings: chatSettings('Slack'), events: CHAT_EVENTS },
  { slug: 'mattermost', title: 'Mattermost notifications', settings: chatSettings('Mattermost'), events: CHAT_EVENTS },
  // Discord posts to the webhook's own channel: no channel settings (integrations_helpers.rb).
  {
    slug: 'discord', title: 'Discord Notifications', events: MARKDOWN_CHAT_EVENTS,
    settings: chatSettings('Discord')
      .filter((s) => ['webhook', 'notify_only_broken_pipelines', 'branches_to_be_notified'].includes(s.name)),
  },
  // Microsoft Teams posts to the channel of its webhook: no channel settings.
  {
    slug: 'microsoft-teams', title: 'Microsoft Teams notifications', events: MARKDOWN_CHAT_EVENTS,
    settings: chatSettings('Microsoft Teams')
      .filter((s) => ['webhook', 'notify_only_broken_pipelines', 'branches_to_be_notified'].includes(s.name)),
  },
  // Google Chat posts to the room of its webhook: no channel settings either.
  {
    slug: 'hangouts-chat', title: 'Google Chat', events: MARKDOWN_CHAT_EVENTS,
    settings: chatSettings('Google Chat')
      .filter((s) => ['webhook', 'notify_only_broken_pipelines', 'branches_to_be_notified'].includes(s.name)),
  },
];

export function integrationKind(slug: string): IntegrationKind | undefined {
  return INTEGRATIONS.find((k) => k.slug === slug);
}

export const INTEGRATION_SLUGS = INTEGRATIONS.map((k) => k.slug);
