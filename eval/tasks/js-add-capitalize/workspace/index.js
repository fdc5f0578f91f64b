const { reverse } = require("./strings");

console.log(reverse("stressed"));
