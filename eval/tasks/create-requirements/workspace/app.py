import json
import os

import requests
from flask import Flask

app = Flask(__name__)


@app.route("/weather")
def weather():
    city = os.environ.get("CITY", "Oslo")
    data = requests.get(f"https://example.invalid/weather/{city}", timeout=5).json()
    return json.dumps(data)
