/**
 * The web interface's pages by area (router.ts explains `WebArea`): one folder per area under
 * src/web/routes/ (dashboard, explore, namespaces, projects, repository, ci …), one file per page
 * or resource, each default-exporting a WebArea. A new page file adds one line here.
 */
import type { WebArea } from '../router.ts';
import home from './dashboard/home.ts';
import exploreProjects from './explore/projects.ts';
import exploreGroups from './explore/groups.ts';
import profiles from './namespaces/profiles.ts';
import projectOverview from './projects/overview.ts';
import repositoryFiles from './repository/files.ts';
import repositoryCommits from './repository/commits.ts';
import repositoryRefs from './repository/refs.ts';
import ciPipelines from './ci/pipelines.ts';
import ciJobs from './ci/jobs.ts';
import ciLint from './ci/lint.ts';
import ciSettings from './ci/settings.ts';
import profileKeys from './profile/keys.ts';
import profileGpgKeys from './profile/gpg-keys.ts';
import profileTokens from './profile/personal-access-tokens.ts';
import adminUsers from './admin/users.ts';
import adminRunners from './admin/runners.ts';
import issues from './issues/issues.ts';
import issueLabelsAndMilestones from './issues/labels-milestones.ts';
import issueGroupPages from './issues/group-pages.ts';
import repositoryBlame from './repository/blame.ts';
import profileOverview from './profile/overview.ts';
import profileEmails from './profile/emails.ts';
import profilePreferences from './profile/preferences.ts';
import broadcastMessages from './broadcast-messages.ts';
import mergeRequests from './merge-requests/merge-requests.ts';
import snippets from './snippets/snippets.ts';
import releases from './deployments/releases.ts';
import environments from './deployments/environments.ts';
import wikis from './projects/wikis.ts';
import members from './members/members.ts';
import adminRunnerDetail from './admin/runner-detail.ts';
import packages from './packages/packages.ts';
import repositoryArchive from './repository/archive.ts';
import repositoryCompare from './repository/compare.ts';
import projectDownloadExport from './projects/download-export.ts';

export const WEB_AREAS: WebArea[] = [
  home,
  exploreProjects,
  exploreGroups,
  profiles,
  projectOverview,
  repositoryFiles,
  repositoryCommits,
  repositoryRefs,
  ciPipelines,
  ciJobs,
  ciLint,
  ciSettings,
  profileKeys,
  profileGpgKeys,
  profileTokens,
  adminUsers,
  adminRunners,
  issues,
  issueLabelsAndMilestones,
  issueGroupPages,
  repositoryBlame,
  profileOverview,
  profileEmails,
  profilePreferences,
  broadcastMessages,
  mergeRequests,
  snippets,
  releases,
  environments,
  wikis,
  members,
  adminRunnerDetail,
  repositoryArchive,
  repositoryCompare,
  projectDownloadExport,
  packages,
];
