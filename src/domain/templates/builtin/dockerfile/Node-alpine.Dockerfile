# kiln Dockerfile template: a Node.js application on Alpine Linux.
FROM node:lts-alpine

ENV NODE_ENV=production
WORKDIR /app

COPY package*.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY . .

USER node
EXPOSE 3000
CMD ["node", "index.js"]
