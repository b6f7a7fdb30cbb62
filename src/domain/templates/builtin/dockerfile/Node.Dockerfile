# kiln Dockerfile template: a Node.js application.
FROM node:lts-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so that changing the sources keeps this layer cached.
COPY package*.json ./
RUN npm ci --omit=dev && npm cache clean --force

COPY . .

USER node
EXPOSE 3000
CMD ["node", "index.js"]
