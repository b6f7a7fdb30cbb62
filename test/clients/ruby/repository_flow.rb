# The `gitlab` Ruby gem (Debian's ruby-gitlab) driving kiln's groups, namespaces and repository
# content routes end to end. Usage: ruby repository_flow.rb <url> <token>. Prints one JSON report;
# exits non-zero at the first answer that is not what the Service gives.
require 'gitlab'
require 'json'
require 'base64'

url, token = ARGV
client = Gitlab.client(endpoint: "#{url}/api/v4", private_token: token)
report = { 'version' => Gitlab::VERSION }

def check(cond, what)
  raise "check failed: #{what}" unless cond
end

group = client.create_group('Ruby Team', 'ruby-team', description: 'first', visibility: 'internal')
sub = client.create_group('Ruby Sub', 'ruby-sub', parent_id: group.id, visibility: 'internal')
edited = client.edit_group(group.id, description: 'edited', name: 'Ruby Team Two')
check(edited.description == 'edited' && edited.name == 'Ruby Team Two', 'edit_group')
check(client.group_subgroups(group.id).map(&:full_path) == ['ruby-team/ruby-sub'], 'group_subgroups')
report['namespaces'] = client.namespaces(search: 'ruby').map(&:full_path)

project = client.create_project('gem-project', namespace_id: sub.id, initialize_with_readme: true)
check(project.path_with_namespace == 'ruby-team/ruby-sub/gem-project', 'project in a sub-group')
check(client.group_projects(sub.id).map(&:path) == ['gem-project'], 'group_projects')
pid = project.id

commit = client.create_commit(pid, 'gem-branch', 'Two files from Ruby', [
  { action: 'create', file_path: 'lib/one.rb', content: "puts 1\n" },
  { action: 'create', file_path: 'bin/two', content: Base64.strict_encode64("#!/bin/sh\n"), encoding: 'base64', execute_filemode: true },
  { action: 'update', file_path: 'README.md', content: "# gem\n" }
], start_branch: 'main', author_name: 'Gem Author', author_email: 'gem@example.com')
check(commit.title == 'Two files from Ruby', 'create_commit')
report['commit'] = commit.id

check(client.commit(pid, commit.id).author_name == 'Gem Author', 'commit')
check(client.commits(pid, ref_name: 'gem-branch').map(&:id).first == commit.id, 'commits')
check(client.file_contents(pid, 'lib/one.rb', 'gem-branch') == "puts 1\n", 'file_contents')
file = client.get_file(pid, 'bin/two', 'gem-branch')
check(Base64.decode64(file.content) == "#!/bin/sh\n" && file.execute_filemode == true, 'get_file')

client.create_file(pid, 'docs/new file.md', 'gem-branch', 'created', 'Create from Ruby')
client.edit_file(pid, 'docs/new file.md', 'gem-branch', 'edited', 'Edit from Ruby')
check(client.file_contents(pid, 'docs/new file.md', 'gem-branch') == 'edited', 'edit_file')
client.remove_file(pid, 'lib/one.rb', 'gem-branch', 'Remove from Ruby')
report['tree'] = client.tree(pid, ref: 'gem-branch', recursive: true).map(&:path)

branch = client.create_branch(pid, 'gem/feature', 'gem-branch')
check(branch.name == 'gem/feature' && branch.commit.id == client.branch(pid, 'gem-branch').commit.id, 'create_branch')
report['branches'] = client.branches(pid).map(&:name)
client.delete_branch(pid, 'gem/feature')

client.create_tag(pid, 'v1.0.0', 'gem-branch', 'Release from Ruby')
client.create_tag(pid, 'light', 'main')
report['tags'] = client.tags(pid, order_by: 'name', sort: 'asc').map { |t| [t.name, t.message] }
check(client.tag(pid, 'v1.0.0').commit.id == client.branch(pid, 'gem-branch').commit.id, 'tag')
client.delete_tag(pid, 'light')

begin
  client.create_branch(pid, 'bad..name', 'main')
  raise 'an invalid branch name was accepted'
rescue Gitlab::Error::BadRequest => e
  report['bad_branch'] = e.response_message
end

deleted = client.delete_group(group.id)
report['deleted'] = deleted.message
begin
  client.group(group.id)
  raise 'the deleted group is still there'
rescue Gitlab::Error::NotFound
  report['gone'] = true
end

puts JSON.generate(report)
