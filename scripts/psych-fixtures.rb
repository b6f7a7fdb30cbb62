# Writes beside each input of test/fixtures/psych-dump.json what Ruby's `to_yaml` prints for it
# (the Service's CI lint `merged_yaml`), so that src/domain/ci-config/psych-dump.ts is tested
# against real Psych output. Run with any Ruby that has Psych: ruby scripts/psych-fixtures.rb
require 'json'
require 'yaml'

path = File.expand_path('../test/fixtures/psych-dump.json', __dir__)
table = JSON.parse(File.read(path))
table['generator'] = "ruby #{RUBY_VERSION}, psych #{Psych::VERSION}, libyaml #{Psych::LIBYAML_VERSION}"
table['cases'].each { |c| c['psych'] = c['input'].to_yaml }
File.write(path, JSON.pretty_generate(table) + "\n")
