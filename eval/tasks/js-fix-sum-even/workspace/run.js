const { sumEven } = require("./sum");

console.log(sumEven([1, 2, 3, 4, 5]));
