# kiln Dockerfile template: a PHP application served by Apache.
FROM composer:2 AS vendor
WORKDIR /app
COPY composer.json composer.lock* ./
RUN composer install --no-dev --no-interaction --prefer-dist --no-scripts

FROM php:8-apache
COPY --from=vendor /app/vendor /var/www/html/vendor
COPY . /var/www/html/
EXPOSE 80
