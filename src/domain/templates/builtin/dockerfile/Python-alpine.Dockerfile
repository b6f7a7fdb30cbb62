# kiln Dockerfile template: a Python application on Alpine Linux.
FROM python:3-alpine

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /app

COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

COPY . .

RUN adduser -D app
USER app
CMD ["python", "main.py"]
