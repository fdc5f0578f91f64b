function reverse(text) {
  return text.split("").reverse().join("");
}

module.exports = { reverse };
