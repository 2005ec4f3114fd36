import { str, type Env } from './env-readers.js';

/** Where a CI job runs: its provider, commit and branch (nulls when not known). */
export interface CiEnvironment {
  provider: string | null;
  commit: string | null;
  branch: string | null;
}

/**
 * The CI provider and the commit and branch it builds, from the variables each provider sets
 * (docs/cli.md "Evaluation runs"). A pull request's branch is its source branch, not the merge
 * ref. Outside any known provider, CI=true still names a generic "ci".
 */
export function ciEnvironment(env: Env): CiEnvironment {
  if (str(env, 'GITHUB_ACTIONS') === 'true') {
    return { provider: 'github-actions', commit: str(env, 'GITHUB_SHA'), branch: str(env, 'GITHUB_HEAD_REF') ?? str(env, 'GITHUB_REF_NAME') };
  }
  if (str(env, 'GITLAB_CI') !== null) {
    return { provider: 'gitlab', commit: str(env, 'CI_COMMIT_SHA'), branch: str(env, 'CI_MERGE_REQUEST_SOURCE_BRANCH_NAME') ?? str(env, 'CI_COMMIT_REF_NAME') };
  }
  if (str(env, 'CIRCLECI') !== null) return { provider: 'circleci', commit: str(env, 'CIRCLE_SHA1'), branch: str(env, 'CIRCLE_BRANCH') };
  if (str(env, 'BUILDKITE') !== null) return { provider: 'buildkite', commit: str(env, 'BUILDKITE_COMMIT'), branch: str(env, 'BUILDKITE_BRANCH') };
  if (str(env, 'TF_BUILD') !== null) {
    return { provider: 'azure-pipelines', commit: str(env, 'BUILD_SOURCEVERSION'), branch: str(env, 'SYSTEM_PULLREQUEST_SOURCEBRANCH') ?? str(env, 'BUILD_SOURCEBRANCHNAME') };
  }
  if (str(env, 'JENKINS_URL') !== null) return { provider: 'jenkins', commit: str(env, 'GIT_COMMIT'), branch: str(env, 'BRANCH_NAME') ?? str(env, 'GIT_BRANCH') };
  const ci = str(env, 'CI');
  return { provider: ci !== null && ci !== 'false' ? 'ci' : null, commit: str(env, 'CI_COMMIT_SHA'), branch: str(env, 'CI_COMMIT_REF_NAME') };
}
