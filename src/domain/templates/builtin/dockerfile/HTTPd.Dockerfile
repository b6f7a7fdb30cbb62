# kiln Dockerfile template: static files served by the Apache HTTP Server.
FROM httpd:2.4-alpine
# Put the site under public/ in the repository.
COPY public/ /usr/local/apache2/htdocs/
EXPOSE 80
