# kiln Dockerfile template: a Ruby application with Bundler.
FROM ruby:3.1-slim

ENV BUNDLE_WITHOUT="development:test" \
    BUNDLE_DEPLOYMENT=1
WORKDIR /app

RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential \
 && rm -rf /var/lib/apt/lists/*

COPY Gemfile Gemfile.lock ./
RUN bundle install

COPY . .

RUN useradd --create-home app
USER app
CMD ["bundle", "exec", "ruby", "app.rb"]
