from app.settings import MAX_RETRIES, TIMEOUT_SECONDS


def fetch(get, url):
    last = None
    for _ in range(MAX_RETRIES):
        try:
            return get(url, timeout=TIMEOUT_SECONDS)
        except OSError as error:
            last = error
    raise last
