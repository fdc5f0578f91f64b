function reverse(text) {
  return text.split("").reverse().join("");
}

function capitalize(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

module.exports = { reverse, capitalize };
